"""The reproducibility ledger: one mechanism through which chapters record their checks.

A chapter opens a :class:`Ledger`, records each claim it checks, and saves::

    ledger = Ledger("icgd_linear", profile)
    ledger.record("icdl-icgd-one-step", ours=f"{err:.1e}", criterion="max |Δw| ≤ 1e-12",
                  passed=err <= 1e-12)
    ledger.save()

The claim's source, the paper's value and the guarding test come from the
registry in :mod:`icdl.book.claims`, never from the chapter. :func:`render_report`
turns every saved record, plus the claims nobody has recorded yet, into the
markdown table of the book's reproducibility report.

A record that fails its criterion is a ``fail`` and turns ``tests/test_ledger.py``
red -- unless :data:`icdl.book.claims.MISMATCHES` registered the mismatch in
advance (its reason and the band its ``value`` is expected in) and the recorded
``value`` lies in that band: then it is shown as ``mismatch`` with the registered
reason. A chapter cannot declare a mismatch on its own.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd

from .claims import CLAIMS, MISMATCHES, get_claim
from .results import load_result, provenance, results_dir, save_result

STATUSES = ("pass", "fail", "mismatch")


@dataclass(frozen=True)
class Record:
    claim: str
    ours: str
    criterion: str
    status: str
    profile: str
    note: str = ""
    value: float | None = None


def _command(chapter: str, profile: str) -> str:
    return f"python -m icdl.book.execute {chapter} --profile {profile}"


def judge_status(claim: str, passed: bool, value: float | None = None) -> str:
    """The one judge of every chapter: ``pass`` if the criterion holds; else ``mismatch`` if the claim's
    mismatch is registered in :data:`icdl.book.claims.MISMATCHES` and ``value`` lies in its band; else
    ``fail``."""
    if passed:
        return "pass"
    m = MISMATCHES.get(claim)
    return "mismatch" if m is not None and m.contains(value) else "fail"


class Ledger:
    """Collects a chapter's records at one profile and writes them to ``results/ledger/``."""

    def __init__(self, chapter: str, profile: str, *, seed: int | None = None):
        self.chapter = chapter
        self.profile = profile
        self.seed = seed
        self.records: list[Record] = []
        self._start = time.perf_counter()

    def record(self, claim: str, *, ours: str, criterion: str, passed: bool, value: float | None = None,
               note: str = "", judged_on: str | None = None) -> Record:
        """Record one checked claim: :func:`judge_status` decides its status from ``passed``, the registered
        mismatches and ``value`` (the number the registration's band is about); ``judged_on`` names the data
        when it is not this run (e.g. a committed reference result)."""
        get_claim(claim)  # unknown ids fail here, with the list of known ones
        if any(r.claim == claim for r in self.records):
            raise ValueError(f"{self.chapter}: claim {claim!r} recorded twice")
        status = judge_status(claim, bool(passed), value)
        if status == "mismatch":
            m = MISMATCHES[claim]
            note = f"registered mismatch: {m.reason} [{m.quantity} = {value:.3g}, expected in {list(m.band)}]"
        rec = Record(claim, str(ours), criterion, status, judged_on or self.profile, note,
                     None if value is None else float(value))
        self.records.append(rec)
        return rec

    def table(self) -> pd.DataFrame:
        """The records so far, with the paper's side from the registry (for the chapter page)."""
        rows = []
        for r in self.records:
            c = get_claim(r.claim)
            rows.append({"source": c.source, "paper": c.paper, "ours": r.ours,
                         "criterion": r.criterion, "status": r.status})
        return pd.DataFrame(rows)

    def path(self) -> Path:
        return results_dir("ledger") / f"{self.chapter}.{self.profile}.json"

    def save(self) -> Path:
        prov = provenance(command=_command(self.chapter, self.profile),
                          wall_time_s=time.perf_counter() - self._start,
                          profile=self.profile, seed=self.seed)
        data = {"chapter": self.chapter, "records": [asdict(r) for r in self.records]}
        return save_result(self.path(), data, provenance=prov)


def load_records(folder: Path | None = None) -> list[tuple[Record, dict]]:
    """Every saved record with the provenance of its file, in file-name order."""
    folder = folder or results_dir("ledger")
    out = []
    for path in sorted(folder.glob("*.json")):
        obj = load_result(path)
        for raw in obj["data"]["records"]:
            try:
                out.append((Record(**raw), obj["provenance"]))
            except TypeError as err:
                raise ValueError(f"ledger file {path} has a record that does not fit: {err}") from None
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


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_report(folder: Path | None = None) -> str:
    """The report table as MyST markdown (a summary line, then one table)."""
    df = report_frame(folder)
    counts = df["status"].value_counts()
    summary = ", ".join(f"{counts.get(s, 0)} {s}" for s in (*STATUSES, "not yet covered"))
    cols = ["source", "paper", "ours", "criterion", "status", "profile", "chapter", "test", "note"]
    lines = [f"**{len(df)} rows:** {summary}.", "",
             "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for _, row in df.iterrows():
        cells = [_cell(row[c]) for c in cols]
        cells[cols.index("test")] = f"`{cells[cols.index('test')]}`" if row["test"] != "—" else "—"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m icdl.book.ledger OUT.md``: write the report table (used by ``make book``)."""
    import sys

    from .results import atomic_write_text

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m icdl.book.ledger OUT.md", file=sys.stderr)
        return 2
    atomic_write_text(Path(args[0]), render_report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
