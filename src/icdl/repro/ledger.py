"""The reproducibility ledger: one mechanism through which chapters record their checks.

A chapter opens a :class:`Ledger`, records each claim it checks, and saves::

    ledger = Ledger("icgd_linear", profile)
    ledger.record("icdl-icgd-one-step", ours=f"{err:.1e}", criterion="max |Δw| < 1e-13", value=err)
    ledger.save()

The claim's source, the paper's value and the guarding test come from the
registry in :mod:`icdl.repro.claims`, never from the chapter. :func:`render_report`
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

import pandas as pd

from .claims import (
    CLAIMS,
    CLAIMS_BY_ID,
    CRITERIA,
    DEVIATIONS,
    DOCUMENTS,
    KNOWN_FAILURES,
    MISMATCHES,
    REPLACED,
    WITHDRAWN,
    criterion_verdict,
    document,
    get_claim,
    unmet_gates,
)
from .results import ResultFileError, load_result, project_root, provenance, results_dir, save_result

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
    INCONCLUSIVE: "the 90 % interval of its number (over training seeds and test prompts) straddles the line, or "
                  "a condition its design had to meet (a gate, registered with it) was not met, so the data cannot "
                  "decide.",
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

        rows = "".join(
            f'<tr><td data-label="claim"><a href="../book/report.html#claim-{r.claim}">'
            f"{math_html(get_claim(r.claim).source)}</a></td>"
            f'<td data-label="criterion">{math_html(r.criterion)}</td>'
            f'<td data-label="status" class="{status_class(r.status)}"><b>{r.status}</b></td></tr>'
            for r in self.records)
        return HTML('<table class="claims-box claims-judged"><thead><tr><th>claim</th><th>criterion</th><th>status</th>'
                    "</tr></thead><tbody>" + rows + "</tbody></table>")

    def box(self):
        """The chapter's claims as its first screen shows them: claim, paper, ours, status with the run the
        numbers come from in plain words, and a link to the claim's entry in the report (HTML; glued at the end
        of the chapter, shown at its top). A change of the paper's setting is written once under the table and
        marked (a, b, …) on each row it concerns: rows under the same change do not repeat it."""
        import html

        from IPython.display import HTML

        rows, marks = [], {}
        for r in self.records:
            c = get_claim(r.claim)
            mark = ""
            if r.claim in DEVIATIONS:
                mark = marks.setdefault(DEVIATIONS[r.claim], "abcdefghijklmnopqrstuvwxyz"[len(marks) % 26])
                mark = f"<sup>{mark}</sup>"
            rows.append(f'<tr><td data-label="claim"><a href="../book/report.html#claim-{r.claim}">'
                        f"{math_html(c.source)}</a></td>"
                        f'<td data-label="paper">{math_html(c.paper)}</td><td data-label="ours">{math_html(r.ours)}'
                        f'</td><td data-label="status" class="{status_class(r.status)}"><b>{r.status}</b>{mark}'
                        f"<br><small>{html.escape(run_words(r.profile))}</small></td></tr>")
        notes = "".join(f'<tr class="deviation"><td colspan="4"><small><i><sup>{m}</sup> deviation: '
                        f"{math_html(text)}</i></small></td></tr>" for text, m in marks.items())
        return HTML('<table class="claims-box"><thead><tr><th>claim</th><th>paper</th><th>ours</th>'
                    "<th>status</th></tr></thead><tbody>" + "".join(rows) + notes + "</tbody></table>")

    def path(self) -> Path:
        if self.overrides:
            folder = project_root() / "runs" / "overrides" / "ledger"
            return folder / f"{self.chapter}.{'+'.join((self.profile, *self.overrides))}.json"
        return results_dir("ledger") / f"{self.chapter}.{self.profile}.json"

    def save(self) -> Path:
        prov = provenance(command=_command(self.chapter, self.profile, self.overrides),
                          wall_time_s=time.perf_counter() - self._start,
                          profile=self.profile, seed=self.seed)
        records = [asdict(r) for r in self.records]
        data = {"chapter": self.chapter, "records": records, "seal": seal(records)}
        return save_result(self.path(), data, provenance=prov, keep_if_same=self.profile == "quick")


#: the runs a status can be judged on, in a reader's words (any other label is shown as it is)
RUN_WORDS = {"reference": "on the reference run", "quick": "on this page's quick run",
             "paper": "on the paper's settings", "longer": "on the models trained longer",
             "wide": "on the twice-as-wide models", "n01": "on the run with x ~ N(0, I)",
             "control": "on the models trained on linear targets",
             "fair": "on the rerun with GD's grid widened"}


def run_words(run: str) -> str:
    """The run a record was judged on as the claims box says it: ``reference`` -> "on the reference run"; a
    label of the chapter's own (``the ℓ1 scan (l1e-4, l1e-3)``, ``longer``) prefixed with "on"."""
    if run in RUN_WORDS:
        return RUN_WORDS[run]
    return run if run.startswith("on ") else f"on {run}"


def seal(records: list[dict]) -> str:
    """The sha256 of a ledger file's records, every field of every record (the shown text -- ``ours``,
    ``criterion``, ``note`` -- as much as the numbers and the status), in their order. :meth:`Ledger.save`
    writes it beside the records and :func:`load_records` refuses a file whose records no longer give it: a
    record edited by hand, deleted or copied is caught at the next load. It does not stop a deliberate forger
    (the seal can be recomputed, and the diff then shows it); it stops a quiet edit that leaves the numbers
    and the status alone, which the re-judging of the numbers cannot see."""
    import hashlib
    import json

    text = json.dumps(records, sort_keys=True, ensure_ascii=True, allow_nan=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


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
    if data.get("seal") != seal(raws):
        raise LedgerFileError(f"ledger file {path} was changed after the run that wrote it (its records no longer "
                              f"match their seal: a record edited, deleted or added by hand); {redo}")
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


def report_frame(folder: Path | None = None) -> pd.DataFrame:
    """One row per (claim, profile) record, plus one row per claim with no record."""
    records = load_records(folder)
    by_claim: dict[str, list[tuple[Record, dict]]] = {}
    for rec, prov in records:
        by_claim.setdefault(rec.claim, []).append((rec, prov))
    rows = []
    for c in CLAIMS:
        entries = by_claim.get(c.id)
        if not entries:
            rows.append({"id": c.id, "source": c.source, "paper": c.paper, "ours": "—",
                         "criterion": "—", "status": "not yet covered", "profile": "—",
                         "chapter": c.chapter or "—", "test": c.test or "—", "note": ""})
            continue
        for rec, prov in entries:
            rows.append({"id": c.id, "source": c.source, "paper": c.paper, "ours": rec.ours,
                         "criterion": rec.criterion, "status": rec.status, "profile": rec.profile,
                         "chapter": c.chapter or "—", "test": c.test or "—", "note": rec.note,
                         "commit": prov.get("git_commit", "")[:12]})
    return pd.DataFrame(rows)


_ORDER = ("fail", "mismatch", INCONCLUSIVE, PASS_DEVIATION, "pass")  # a claim's status: the worst of its records


def chapter_title(chapter: str) -> str:
    """A chapter's title, its notebook's first heading (the link text a reader can read, not the file id)."""
    import re

    src = Path(__file__).resolve().parents[3] / "notebooks" / f"{chapter}.py"
    if src.is_file():
        if m := re.search(r"^# # (.+)$", src.read_text(encoding="utf-8"), flags=re.M):
            return m.group(1).strip()
    return chapter


def _deviation(claim: str) -> str:
    """The registered change of the paper's setting under which a claim is checked, as a line of HTML (or '')."""
    return f"<br><small><i>deviation: {math_html(DEVIATIONS[claim])}</i></small>" if claim in DEVIATIONS else ""


def status_class(status: str) -> str:
    """The CSS class of a status cell: ``status-pass``, ``status-pass-deviation``, ``status-not-yet-covered``."""
    import re

    return "status-" + re.sub(r"[^a-z]+", "-", status).strip("-")


def claim_frame(folder: Path | None = None) -> pd.DataFrame:
    """One row per registered claim: its status (the worst over its records; ``not yet covered`` without
    one), the statuses per profile side by side, and the record the reader sees -- the one judged on the
    largest run (a record judged on a reference result before one judged on a quick run)."""
    rows_by_claim: dict[str, list[dict]] = {}
    for _, row in report_frame(folder).iterrows():
        rows_by_claim.setdefault(row["id"], []).append(row.to_dict())
    out = []
    for c in CLAIMS:
        rows = rows_by_claim.get(c.id, [])
        recs = [r for r in rows if r["status"] != "not yet covered"]
        if not recs:
            out.append({"id": c.id, "source": c.source, "paper": c.paper, "ours": "—", "criterion": "—",
                        "status": "not yet covered", "profiles": "—", "chapter": c.chapter or "", "test": c.test or "",
                        "note": ""})
            continue
        shown = sorted(recs, key=lambda r: (not str(r["profile"]).startswith("reference"), r["profile"]))[0]
        status = min((r["status"] for r in recs), key=_ORDER.index)
        profiles = "; ".join(f"{r['profile']}: {r['status']}" for r in recs)
        out.append({"id": c.id, "source": c.source, "paper": c.paper, "ours": shown["ours"],
                    "criterion": shown["criterion"], "status": status, "profiles": profiles,
                    "chapter": c.chapter or "", "test": c.test or "", "note": shown["note"]})
    return pd.DataFrame(out)


def _esc(text: object) -> str:
    import html

    return html.escape(str(text)).replace("\n", " ")


def count(n) -> str:
    """A count as the book writes it, in prose, tables and claims boxes alike: thousands set apart by a space
    (6 500, 158 209), never a comma (10,000) or a float (3600.0); a float is rounded to a whole number."""
    return f"{round(n):,}".replace(",", " ")


def sci(x: float, digits: int = 1) -> str:
    """A number as the prose writes it: plainly between 0.1 and 10 000 (``4.0``, not ``4.0e+00``), otherwise as
    a power of ten with the prose's signs (``2.1 × 10⁻³``, ``5 × 10⁶``: not ``2.1e-03``); ``digits`` after the
    point in either form."""
    import math

    if x == 0 or not math.isfinite(x):
        return typeset_minus(f"{x:g}")
    if 0.1 <= abs(x) < 1e4:
        return typeset_minus(f"{x:.{digits}f}")
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    power = str(int(exponent)).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return typeset_minus(f"{mantissa} × 10{power}")


def typeset_minus(text: str) -> str:
    """A number's sign as the minus sign the tables use (``-0.012`` -> ``−0.012``), not a hyphen -- a zero
    rounded from a small negative number keeps its sign (``−0.000``: an interval's end below 0 is what a
    reader must see to tell a straddle); exponents (``1e-12``) and options (``--layers``) stay as they are."""
    import re

    return re.sub(r"(?<![\w.\-])-(?=\.?\d)", "−", text)


def math_html(text: object) -> str:
    """``text`` for an HTML table cell: escaped, with each ``$…$`` span (the claims' formulas, written as
    MyST math) handed to MathJax as inline math (``<span class="math">\\(…\\)</span>``, which the book's
    MathJax typesets inside raw HTML, where MyST's own ``$`` parsing does not reach)."""
    parts = str(text).split("$")
    if len(parts) % 2 == 0:
        raise ValueError(f"unpaired $ in {text!r}: write each formula as $…$")
    return "".join(_esc(typeset_minus(p)) if i % 2 == 0  # a number's sign as the tables' minus sign
                   else f'<span class="math notranslate nohighlight">\\({_esc(p)}\\)</span>'
                   for i, p in enumerate(parts))


def render_report(folder: Path | None = None, errata: dict | None = None) -> str:
    """The report as MyST markdown: the counts of claims by status, the failures and the registered
    mismatches with their reasons first, then every claim as a block, grouped by document (anchor
    ``claim-<id>``, a link to the chapter that checks it, the statuses per profile and the guarding test, and
    a link to the erratum about it: ``errata`` maps a claim to the anchor and title of its entry,
    :func:`icdl.repro.errata.report_links`)."""
    errata = errata or {}
    df = claim_frame(folder)
    counts = df["status"].value_counts()
    summary = ", ".join(f"**{counts.get(s, 0)}** {s}" for s in (*STATUSES, "not yet covered"))
    lines = [f"**{len(df)} claims:** {summary}.", ""]

    def chapter_link(ch: str) -> str:
        return f'<a href="../notebooks/{ch}.html">{math_html(chapter_title(ch))}</a>' if ch else "—"

    for status, title in (("fail", "Failures"), ("mismatch", "Registered mismatches"),
                          (INCONCLUSIVE, "Inconclusive: an interval straddles the line, or a gate is not met"),
                          (PASS_DEVIATION, "Passes under a changed setting of the paper")):
        part = df[df["status"] == status]
        if len(part):
            lines += [f"## {title}", ""]
            for r in part.itertuples():
                lines.append(f'* **{r.source}** ({chapter_link(r.chapter)}, <a href="#claim-{r.id}">details</a>): '
                             f"{typeset_minus(r.ours)}. "
                             f"*{typeset_minus(_commands_as_code(r.note)) or 'no registered reason'}*")
            lines.append("")
    if WITHDRAWN:
        lines += ["## Withdrawn bands", "", "A band registered after a run of its design had been seen cannot tell "
                  "an expected failure from an unexpected one; these were withdrawn, and their claims are judged "
                  "by the criterion alone.", ""]
        lines += [f'* <a href="#claim-{claim}">{math_html(get_claim(claim).source)}</a>: {_esc(why)}'
                  for claim, why in WITHDRAWN.items()]
        lines.append("")
    lines += replaced_section()
    lines += ["## Every claim, by document", ""]
    df = df.assign(document=df["id"].map(document))
    for key, title in DOCUMENTS.items():
        part = df[df["document"] == key]
        if part.empty:
            continue
        lines += [f"### {title}", "", '<div class="claims">']
        lines += [_claim_block(r, errata.get(r.id)) for r in part.itertuples()]
        lines += ["</div>", ""]
    return "\n".join(lines) + "\n"


def replaced_section() -> list[str]:
    """The report's "Designs we replaced" (:data:`icdl.repro.claims.REPLACED`): per replaced claim, what it said,
    the run it was judged on and its verdict there, why it was replaced and the live claims that answer it now.
    Its verdicts are history: no chapter records these claims, and the counts above leave them out."""
    if not REPLACED:
        return []
    lines = ["## Designs we replaced", "",
             "Each of this book's questions has one live claim, judged on its latest registered design. The claims "
             "of the designs it replaced are listed here with the run they were judged on and their verdict there "
             "(that commit reproduces it); no chapter records them any more.", ""]
    for r in REPLACED.values():
        now = ", ".join(f'<a href="#claim-{b}">{_esc(b)}</a>' for b in r.by) or "not asked again"
        lines.append(f"* **{math_html(r.source)}** (`{r.id}`): "
                     f'<span class="{status_class(r.status)}">{_esc(r.status)}</span> on '
                     f"{_commands_as_code(r.judged_on)} -- {math_html(typeset_minus(r.ours))}. "
                     f"*Replaced: {_esc(r.reason)}.* Answered now by: {now}.")
    return lines + [""]


def _commands_as_code(text: str) -> str:
    """``python -m …`` commands inside a note as code, so the page shows them as typed (in prose the
    typographer would turn their ``--`` into a dash)."""
    import re

    return re.sub(r"(python -m [\w.]+(?: --?[\w-]+(?: (?!--)[\w./,]+)?)*)", r"`\1`", text)


def breakable(test: str) -> str:
    """A test id that may wrap after its path separators and underscores, never inside a word."""
    return "".join(f"{_esc(ch)}<wbr>" if ch in "/_:" else _esc(ch) for ch in test)


def _claim_block(r, erratum: tuple[str, str] | None = None) -> str:
    """One claim of the report as a block (anchor ``claim-<id>``): the result and its status first, then what
    the paper says, ours, the criterion, and the statuses per profile, the chapter and the guarding test; with
    ``erratum`` (the anchor and title of an erratum about this claim), a link to its entry."""
    slip = (f'<dt>erratum</dt><dd><a href="errata.html#{erratum[0]}">{math_html(erratum[1])}</a></dd>'
            if erratum is not None else "")
    chapter = (f'<a href="../notebooks/{r.chapter}.html">{math_html(chapter_title(r.chapter))}</a>' if r.chapter
               else "no chapter yet")
    test = f"<code>{breakable(r.test)}</code>" if r.test else "no test yet"
    return (f'<div class="claim" id="claim-{r.id}">'
            f'<p class="claim-head"><span class="{status_class(r.status)}"><b>{_esc(r.status)}</b></span> '
            f"{math_html(r.source)} <small>({_esc(r.id)})</small></p>"
            f'<dl><dt>paper</dt><dd>{math_html(r.paper)}</dd>'
            f"<dt>ours</dt><dd>{math_html(r.ours)}{_deviation(r.id)}</dd>"
            f"<dt>criterion</dt><dd>{math_html(r.criterion)}</dd>"
            f"<dt>runs</dt><dd>{_esc(r.profiles)} · {chapter} · {test}</dd>{slip}</dl></div>")



def render_summary(folder: Path | None = None) -> str:
    """The results at a glance, as MyST markdown (the intro and the report open with it): per source document
    the number of claims by status, and one line per claim that is not a plain pass, linked to its entry in the
    report."""
    from .glance import render_glance

    df = claim_frame(folder)
    df["document"] = df["id"].map(document)
    legend = "".join(f'<li><span class="{status_class(k)}"><b>{_esc(k)}</b></span>: {_esc(v)}</li>'
                     for k, v in STATUS_SENTENCES.items())
    lines = [render_glance(dict(zip(df["id"], df["status"])), status_class, math_html), "",
             f"**What the words mean.** Each claim gets one status:\n\n<ul>{legend}</ul>", "",
             "**Every claim that is not a plain pass**, by document:", ""]
    for key, title in DOCUMENTS.items():
        part = df[df["document"] == key]
        if part.empty:
            continue
        counts = part["status"].value_counts()
        tally = ", ".join(f"{counts[s]} {s}" for s in (*STATUSES, NOT_COVERED) if counts.get(s, 0))
        lines.append(f"**{title}** — {len(part)} claims: {tally}.")
        lines.append("")
        for r in part[part["status"] != "pass"].itertuples():
            lines.append(f'* <a href="report.html#claim-{r.id}">{_esc(r.source)}</a> — {_esc(r.paper)}: '
                         f'<span class="{status_class(r.status)}"><b>{_esc(r.status)}</b></span>')
        lines.append("")
    return "\n".join(lines)
