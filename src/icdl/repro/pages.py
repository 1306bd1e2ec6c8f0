"""The reproducibility report and the first page's summary, rendered from the sealed ledger files
(:func:`icdl.repro.ledger.load_records`) and the claims registry (:mod:`icdl.repro.claims`): the counts by status,
the withdrawn bands and the designs replaced, and every claim folded to one line under filters, grouped by
document, what was seen and why in its fold. ``python -m icdl.repro.report`` writes them for the book's build.

======================  ============================================================================================
:func:`report_frame`    one row per stored record
:func:`claim_frame`     one row per registered claim: its worst status over its records, the chapter, the test
:func:`render_report`   the report page as MyST markdown
:func:`filter_bar`      its filters of document, chapter, status and words (``book/_static/book.js`` acts on them)
:func:`replaced_section` the report's "Designs we replaced", folded
:func:`render_summary`  the first page's summary: the bottom line and the papers' table of :mod:`icdl.repro.glance`
======================  ============================================================================================
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .claims import CLAIMS, DEVIATIONS, DOCUMENTS, REPLACED, WITHDRAWN, document, get_claim
from .glossary import linked_terms
from .ledger import (
    INCONCLUSIVE,
    NOT_COVERED,
    PASS_DEVIATION,
    STATUS_SENTENCES,
    STATUSES,
    Record,
    load_records,
)
from .typeset import commands_as_code, esc, math_html, named_attentions, typeset_minus
from .words import NOT_TESTED, run_words, status_class


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
#: the statuses as the intro and the report show them, in the order they are counted
SHOWN = (*STATUSES, NOT_TESTED, NOT_COVERED)


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


def claim_frame(folder: Path | None = None) -> pd.DataFrame:
    """One row per registered claim: its status (the worst over its records; ``not yet covered`` without
    one), the statuses per profile side by side, and the record the reader sees -- the one judged on the
    largest run (a record judged on a reference result before one judged on a quick run). ``shown``: the status as
    the intro and the report show it -- :data:`~icdl.repro.words.NOT_TESTED` for an inconclusive claim whose every
    inconclusive record leaves a gate of its design unmet (its number never read), else the status."""
    from .glance import STRADDLES

    untested = {c for c, why in inconclusive_reasons(folder).items() if STRADDLES not in why}
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
                        "note": "", "shown_profile": "", "shown": "not yet covered"})
            continue
        shown = sorted(recs, key=lambda r: (not str(r["profile"]).startswith("reference"), r["profile"]))[0]
        status = min((r["status"] for r in recs), key=_ORDER.index)
        profiles = "; ".join(f"{run_words(r['profile']).removeprefix('on ').replace('this page', 'the chapter')}: "
                               f"{r['status']}" for r in recs)
        out.append({"id": c.id, "source": c.source, "paper": c.paper, "ours": shown["ours"],
                    "criterion": shown["criterion"], "status": status, "profiles": profiles,
                    "chapter": c.chapter or "", "test": c.test or "", "note": shown["note"],
                    "shown_profile": shown["profile"],
                    "shown": NOT_TESTED if status == INCONCLUSIVE and c.id in untested else status})
    return pd.DataFrame(out)


def render_report(folder: Path | None = None, errata: dict | None = None) -> str:
    """The report as MyST markdown: the counts of claims by status, the withdrawn bands and the replaced designs
    (each folded), then the filters (:func:`filter_bar`) and every claim folded to one line, grouped by document
    (anchor ``claim-<id>``; in the fold the paper's words, ours, the criterion, why it is not a plain pass, the
    statuses per profile, a link to the chapter that checks it, the guarding test, and a link to the erratum
    about it: ``errata`` maps a claim to the anchor and title of its entry, :func:`icdl.repro.errata.report_links`)."""
    errata = errata or {}
    df = claim_frame(folder)
    counts = df["shown"].value_counts()
    summary = ", ".join(f"**{counts.get(s, 0)}** {s}" for s in SHOWN)
    lines = [f"**{len(df)} claims:** {summary}.", ""]

    if WITHDRAWN:
        items = "".join(f'<li><a href="#claim-{claim}">{math_html(get_claim(claim).source)}</a>: {esc(why)}</li>'
                        if claim not in REPLACED else  # its whole design replaced since: no live block to link to
                        f"<li>{math_html(REPLACED[claim].source)} (a design replaced since): {esc(why)}</li>"
                        for claim, why in WITHDRAWN.items())
        lines += [f'<details class="report-part"><summary><b>Withdrawn bands</b> ({len(WITHDRAWN)}): a band '
                  "registered after a run of its design had been seen cannot tell an expected failure from an "
                  f"unexpected one, so these claims are judged by the criterion alone</summary><ul>{items}</ul>"
                  "</details>", ""]
    lines += replaced_section()
    lines += ["## Every claim, by document", "",
              "Each claim is one line, its status and its result; open it for what the paper says, what we "
              "measured, the criterion, the runs, the chapter and the guarding test. The filters keep the claims "
              "of one document, chapter or status, or those whose words hold a text.", "",
              filter_bar(df), ""]
    df = df.assign(document=df["id"].map(document))
    for key, title in DOCUMENTS.items():
        part = df[df["document"] == key]
        if part.empty:
            continue
        lines += [f"### {title}", "", f'<div class="claims" data-document="{esc(key)}">']
        lines += [_claim_block(r, errata.get(r.id)) for r in part.itertuples()]
        lines += ["</div>", ""]
    seen: set[str] = set()  # each term linked at its first use on the page only
    return "\n".join(linked_terms(line, seen=seen) for line in lines) + "\n"


def filter_bar(df: pd.DataFrame) -> str:
    """The report's filters (raw HTML; ``book/_static/book.js`` acts on them, offline, no library): one
    choice each of document, chapter and status, and a text search over the claims' words."""
    def select(name: str, label: str, options: list[tuple[str, str]]) -> str:
        items = "".join(f'<option value="{esc(v)}">{esc(t)}</option>' for v, t in options)
        return (f'<label>{esc(label)} <select data-filter="{name}"><option value="">all</option>{items}'
                "</select></label>")

    chapters = [c for c in dict.fromkeys(df["chapter"]) if c]
    statuses = [s for s in SHOWN if (df["shown"] == s).any()]
    return ('<div class="claims-filter">'
            + select("document", "document", [(k, t) for k, t in DOCUMENTS.items()
                                              if (df["id"].map(document) == k).any()])
            + select("chapter", "chapter", [(c, chapter_title(c)) for c in chapters])
            + select("status", "status", [(s, s) for s in statuses])
            + '<label>words <input type="search" data-filter="text" placeholder="e.g. objective 1"></label>'
            + '<span class="claims-count" aria-live="polite"></span></div>')


def replaced_section() -> list[str]:
    """The report's "Designs we replaced" (:data:`icdl.repro.claims.REPLACED`): per replaced claim, what it said,
    the run it was judged on and its verdict there, why it was replaced and the live claims that answer it now.
    Its verdicts are history: no chapter records these claims, and the counts above leave them out."""
    if not REPLACED:
        return []
    lines = [f'<details class="report-part"><summary><b>Designs we replaced</b> ({len(REPLACED)}): each of this '
             "book's questions has one live claim, judged on its latest registered design; the designs it replaced, "
             "with the run they were judged on and their verdict there (that commit reproduces it)</summary>", ""]
    for r in REPLACED.values():
        now = ", ".join(f'<a href="#claim-{b}">{esc(get_claim(b).source)}</a>' for b in r.by) or "not asked again"
        # markdown inside the fold (a blank line after the summary): MyST renders the $...$ of the claims' words
        lines.append(f"* **{r.source}**: "
                     f'<span class="{status_class(r.status)}">{esc(r.status)}</span> on '
                     f"{_commands_as_code(r.judged_on)} -- {named_attentions(typeset_minus(r.ours))}. "
                     f"*Replaced: {r.reason}.* Answered now by: {now}.")
    return lines + ["", "</details>", ""]


def _commands_as_code(text: str) -> str:
    """``python -m …`` commands inside a note as code (:func:`~icdl.repro.typeset.commands_as_code`)."""
    return commands_as_code(text)


def breakable(test: str) -> str:
    """A test id that may wrap after its path separators and underscores, never inside a word."""
    return "".join(f"{esc(ch)}<wbr>" if ch in "/_:" else esc(ch) for ch in test)


def _title(r) -> str:
    """A claim's line in the report: its result (the source), or for a question of the book's own the question
    itself (its source says only "this book's question")."""
    if document(r.id) != "book":
        return r.source
    from .glance import _question

    return _question(get_claim(r.id))


def _claim_block(r, erratum: tuple[str, str] | None = None) -> str:
    """One claim of the report as a block (anchor ``claim-<id>``): the result and its status first, then what
    the paper says, ours, the criterion, and the statuses per profile, the chapter and the guarding test; with
    ``erratum`` (the anchor and title of an erratum about this claim), a link to its entry."""
    slip = (f'<dt>erratum</dt><dd><a href="errata.html#{erratum[0]}">{math_html(erratum[1])}</a></dd>'
            if erratum is not None else "")
    chapter = (f'<a href="../notebooks/{r.chapter}.html">{math_html(chapter_title(r.chapter))}</a>' if r.chapter
               else "no chapter yet")
    test = (f'<a class="code-link" data-code="{esc(r.test)}"><code>{breakable(r.test)}</code></a>' if r.test
            else "no test yet")  # the book's code_pages extension gives the link its address
    # folded: its status and result on one line, the rest a click away (the page was 66 screens of blocks); the
    # claim's id stays in the anchor, not in the reader's text; the filters read the data- attributes
    return (f'<details class="claim" id="claim-{r.id}" data-chapter="{esc(r.chapter or "")}" '
            f'data-status="{esc(r.shown)}">'
            f'<summary class="claim-head"><span class="{status_class(r.shown)}"><b>{esc(r.shown)}</b></span> '
            f"{math_html(_title(r))}</summary>"
            f'<dl><dt>paper</dt><dd>{math_html(r.paper)}</dd>'
            f"<dt>ours</dt><dd>{math_html(r.ours)}{_deviation(r.id)}</dd>"
            f"<dt>criterion</dt><dd>{math_html(r.criterion)}</dd>"
            + (f"<dt>why</dt><dd>{math_html(named_attentions(typeset_minus(r.note)))}</dd>"
               if r.note and not r.note.startswith("deviation:") else "") +
            f"<dt>runs</dt><dd>{esc(r.profiles)} · {chapter} · {test}</dd>{slip}</dl></details>")


def inconclusive_reasons(folder: Path | None = None) -> dict[str, list[str]]:
    """Per inconclusive claim, what its verdict rests on (:func:`icdl.repro.glance.why_inconclusive`), read off its
    inconclusive records' numbers: the gates they leave unmet, or an interval across the line."""
    from .claims import CRITERIA
    from .claims.base import GATE_OPS
    from .glance import why_inconclusive

    out: dict[str, list[str]] = {}
    for rec, _ in load_records(folder):
        if rec.status != INCONCLUSIVE:
            continue
        values = {**rec.values, "value": rec.value}
        gates = [c.key for c in CRITERIA.get(rec.claim, ()) if c.op in GATE_OPS
                 and c.verdict(values) is None]
        out[rec.claim] = list(dict.fromkeys(out.get(rec.claim, []) + why_inconclusive(values, gates)))
    return out


#: the line of ``generated/summary.md`` between its bottom line and its table (an HTML comment: a reader never sees
#: it); the intro includes the file in two parts, split here, with the N(0, I) result said between them
GLANCE = "<!-- the table of the papers' results -->"


def render_summary(folder: Path | None = None) -> str:
    """The results at a glance, as MyST markdown (the intro and the report open with it): per source document
    the number of claims by status, and one line per claim that is not a plain pass, linked to its entry in the
    report."""
    from .glance import MIXED, bottom_line, render_glance

    df = claim_frame(folder)
    df["document"] = df["id"].map(document)
    legend = "".join(f'<li><span class="{status_class(k)}"><b>{esc(k)}</b></span>: {esc(v)}</li>'
                     for k, v in STATUS_SENTENCES.items())
    statuses = dict(zip(df["id"], df["shown"]))
    # every measured number with the run it comes from, in a reader's words (a label like "reference (20 000 of
    # 20 000 epochs)" by its run alone: its record's words already say the rest)
    runs = df["shown_profile"].map(lambda p: run_words(str(p).split(" (")[0]).removeprefix("on ")
                                   .replace("this page", "the chapter"))
    shown = (df["ours"] + " (" + runs + ")").where(~df["shown_profile"].isin(("", "—")), df["ours"])
    # the bottom line, then GLANCE (the intro sets a sentence of its own between the two: its include stops there),
    # then the table, and the words' definitions folded under it
    lines = [bottom_line(statuses, math_html), "", GLANCE, "",
             render_glance(statuses, status_class, math_html, ours=dict(zip(df["id"], shown)),
                           why=inconclusive_reasons(folder)), "",
             ":::{dropdown} What the verdicts' words mean", "Each claim gets one status:", "", f"<ul>{legend}</ul>", "",
             f"A result of the table above takes the status its claims share, or <b>{MIXED}</b> when they differ "
             "(their counts beside it); under a verdict that is inconclusive or not tested, \"not decided: …\" "
             "says what held it back, in the words the claims use.", ":::", "",
             "This book's own questions, and every claim with what we measured "
             'and what held it back, are in the <a href="report.html">report</a>, where they can be filtered by '
             "document, chapter and status.", ""]
    seen: set[str] = set()  # each term linked at its first use on the page only
    return "\n".join(linked_terms(line, seen=seen) for line in lines)
